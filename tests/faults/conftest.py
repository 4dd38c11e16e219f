from tests.jobs.conftest import endpoints, jobs_db  # noqa: F401  (the sweep fixtures, shared)
