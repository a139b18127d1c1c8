"""The lesson and its vote page (pages/lesson.py, pages/vote.py): stops, class room, votes, server."""
