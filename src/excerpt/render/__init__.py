"""Records to text: Markdown/plain for people, JSON for machines. Pure, no I/O."""
