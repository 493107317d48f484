"""Batches of independent jobs, run here or fanned out to worker processes.

In: a scheduler choice (``--scheduler``) and picklable jobs. Out: their results, in the order
the jobs were given. ``scheduler`` runs them (one after another, a local process pool, a Dask
LocalCluster or a running Dask scheduler); ``index_many`` indexes a list of repositories with
it. Dask is an optional extra (``excerpt[dask]``), imported only when a run uses it.
"""

__all__ = ["SCHEDULER_HELP"]

# the forms --scheduler takes, for every command's --help (kept here: building the parser
# must not load the scheduler)
SCHEDULER_HELP = (
    "local:N (N worker processes on this machine: a Dask LocalCluster with the excerpt[dask]"
    " extra, else a process pool) or tcp://HOST:PORT (a running Dask scheduler; needs the"
    " extra)"
)
