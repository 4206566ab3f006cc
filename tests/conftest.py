"""Shared test setup, one of each per session: the S3 server (helpers/s3_fixtures.py, moto on
127.0.0.1), the dask cluster (helpers/dask_fixtures.py, its workers pointed at that server) and,
one per run shared by the xdist workers, the Label Studio server (helpers/label_studio_fixtures.py)
and whatever else starts in the background (helpers/background.py)."""

pytest_plugins = [
    "helpers.background",
    "helpers.s3_fixtures",
    "helpers.dask_fixtures",
    "helpers.label_studio_fixtures",
    "helpers.dockerfile",
    "helpers.browser_reports",
]
