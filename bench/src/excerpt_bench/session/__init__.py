"""``excerpt bench session``: a scripted agent's session on each task, with and without
excerpt, charged by the tokens until every changed line was shown."""
