"""Shared test setup. Fixtures for the S3 tests live in helpers/s3_fixtures.py (moto on 127.0.0.1)."""

pytest_plugins = ["helpers.s3_fixtures"]
