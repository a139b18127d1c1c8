""""Is attention an explanation?" (pages/explanation.py): its jobs, surgery panel and views."""
