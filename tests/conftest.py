"""Shared test setup. Fixtures for the S3 tests live in conftest_s3.py (moto on 127.0.0.1)."""

pytest_plugins = ["conftest_s3"]
