"""Work outside a request: the Celery app and its tasks, and the embedded threads of a serving process.

``celery_app`` is the worker's app (``celery -A leaderboard.workers.celery_app worker``;
the task names are unchanged); ``scorer`` (with ``board_refresher``), ``sweeper``, ``job_worker`` and
``mail_sender`` score uploads, run the sweep, background jobs and the mail outbox in a serving process
when no Celery runs. An
entry point like web/ and cli/: it may import any domain package, never web or cli; the
composition root (leaderboard/__init__.py) starts the threads.
"""
