"""Amazon S3 and S3-compatible stores (MinIO, Ceph, R2) through boto3.

Credentials, region and endpoint are boto3's own business: the standard chain and variables
(`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, `AWS_PROFILE`,
`AWS_ENDPOINT_URL`/`AWS_ENDPOINT_URL_S3`, `AWS_DEFAULT_REGION`, `AWS_CA_BUNDLE`,
`AWS_REQUEST_CHECKSUM_CALCULATION`, ...) apply unchanged. We only bound retries and timeouts:

- retries: botocore's "standard" mode with a bounded number of attempts in all (the first try
  included): `PRELABEL_S3_MAX_ATTEMPTS` if set (the tests lower it to keep fault tests fast),
  else `AWS_MAX_ATTEMPTS`, else 5; clamped to 1..10.
- timeouts: 10 s to connect, 60 s per socket read (a large download is not cut, a dead one is).

Every boto3/botocore error leaves this module as one `StorageError` line naming the store or
object, what we tried and why it failed, chained to the original error.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, BinaryIO, Final, TypeVar
from urllib.parse import urlsplit

import boto3
import boto3.session
import botocore.loaders
import botocore.session
import msgspec
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    PartialCredentialsError,
    ReadTimeoutError,
)

from handler.errors import StorageError
from handler.storage.base import (
    AccessDenied,
    Content,
    Entry,
    ObjectNotFound,
    RangedFile,
    Source,
    Store,
    path_order,
    split_scheme,
)

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer
    from botocore.response import StreamingBody
    from mypy_boto3_s3 import S3Client

SCHEME: Final = "s3"
MAX_ATTEMPTS_VARIABLES: Final = ("PRELABEL_S3_MAX_ATTEMPTS", "AWS_MAX_ATTEMPTS")
DEFAULT_MAX_ATTEMPTS: Final = 5
MAX_ATTEMPTS_LIMIT: Final = 10
CONNECT_TIMEOUT_S: Final = 10
READ_TIMEOUT_S: Final = 60
# Deleting is how a failed publish is undone: it must not double the wait of that failure.
DELETE_ATTEMPTS: Final = 2
STREAM_BUFFER_BYTES: Final = 1 << 20
# A chunked upload is spooled (in memory up to this, then on disk): a retry must re-send it.
SPOOL_BYTES: Final = 8 << 20

BOTO_ERRORS: Final = (BotoCoreError, ClientError)
NOT_FOUND_CODES: Final = frozenset({"NoSuchKey", "404", "NotFound"})
DENIED_CODES: Final = frozenset({"AccessDenied", "403", "AllAccessDisabled", "AccountProblem"})

T = TypeVar("T")


def max_attempts() -> int:
    """Attempts per request in all, from the environment (see the module docstring)."""
    for variable in MAX_ATTEMPTS_VARIABLES:
        raw = os.environ.get(variable, "").strip()
        if raw:
            try:
                value = int(raw)
            except ValueError:
                raise StorageError(f"{variable}={raw!r} is not a whole number of attempts") from None
            return min(max(value, 1), MAX_ATTEMPTS_LIMIT)
    return DEFAULT_MAX_ATTEMPTS


class Connection(msgspec.Struct, frozen=True):
    """A boto3 S3 client and the attempt budget it was built with (for messages)."""

    client: S3Client
    attempts: int

    @classmethod
    def create(cls, attempts: int | None = None) -> Connection:
        attempts = attempts or max_attempts()
        # `total_max_attempts` counts the first try, unlike `max_attempts` (retries only).
        config = Config(
            retries={"mode": "standard", "total_max_attempts": attempts},
            connect_timeout=CONNECT_TIMEOUT_S,
            read_timeout=READ_TIMEOUT_S,
        )
        try:
            # A new session each time, so the environment in force now is the one used.
            client = _session().client("s3", config=config)
        except (*BOTO_ERRORS, ValueError) as error:  # a missing profile, a malformed endpoint URL
            raise StorageError(one_line(f"S3: cannot set up the client: {error}")) from error
        return cls(client, attempts)


# The service models a session parses from botocore's JSON (costly, each time) are the same for
# every session: one loader, shared. boto3's own data folder is on its paths already.
_MODELS: Final = botocore.loaders.create_loader()
_MODELS.search_paths.append(os.path.join(os.path.dirname(boto3.__file__), "data"))
_MODEL_PATHS: Final = len(_MODELS.search_paths)


def _session() -> boto3.session.Session:
    """A fresh session (it reads the environment anew) on the shared models."""
    core = botocore.session.get_session()
    core.register_component("data_loader", _MODELS)
    session = boto3.session.Session(botocore_session=core)
    del _MODELS.search_paths[_MODEL_PATHS:]  # boto3 appends its data folder once per session
    return session


def parse_uri(uri: str) -> tuple[str, str]:
    """`s3://bucket/key` -> (bucket, key); the key is taken literally (spaces, unicode)."""
    scheme, rest = split_scheme(uri)
    bucket, _, key = rest.partition("/")
    if scheme != SCHEME or not bucket:
        raise StorageError(f"{uri!r} is not an S3 URI: expected s3://bucket/key")
    return bucket, key


def one_line(text: str) -> str:
    return " ".join(text.split())


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def describe(error: Exception, bucket: str, attempts: int) -> str:
    """Why a boto3 call failed, in words a user can act on (cf. s3fs `translate_boto_error`)."""
    if isinstance(error, ClientError):
        return _describe_client_error(error, bucket)
    # Timeouts first: ConnectTimeoutError is also an EndpointConnectionError.
    if isinstance(error, ConnectTimeoutError):
        return f"endpoint timed out: no connection within {CONNECT_TIMEOUT_S} s, {attempts} attempts"
    if isinstance(error, ReadTimeoutError):
        return f"endpoint timed out: no answer within {READ_TIMEOUT_S} s, {attempts} attempts"
    if isinstance(error, EndpointConnectionError):
        url = urlsplit(str(error.kwargs.get("endpoint_url", "")))
        return f"endpoint down: cannot connect to {url.scheme}://{url.netloc} ({attempts} attempts)"
    if isinstance(error, NoCredentialsError | PartialCredentialsError):
        return (
            "no usable credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE "
            f"({error})"
        )
    return str(error)


def _describe_client_error(error: ClientError, bucket: str) -> str:
    code = error_code(error)
    metadata = error.response.get("ResponseMetadata", {})
    status = int(metadata.get("HTTPStatusCode", 0))
    if code == "NoSuchBucket":
        return f"bucket {bucket!r} does not exist (NoSuchBucket)"
    if code in NOT_FOUND_CODES:
        return "no such object"
    if code == "InvalidAccessKeyId":
        return (
            "credentials refused: the access key id is unknown (InvalidAccessKeyId); "
            "check AWS_ACCESS_KEY_ID or AWS_PROFILE"
        )
    if code == "SignatureDoesNotMatch":
        return (
            "credentials refused: the secret key does not match the access key id "
            "(SignatureDoesNotMatch); check AWS_SECRET_ACCESS_KEY"
        )
    if code in {"ExpiredToken", "TokenRefreshRequired", "InvalidToken"}:
        return f"credentials refused: the session token is expired or invalid ({code})"
    if code in DENIED_CODES:
        return f"access denied ({code}): the credentials lack permission on bucket {bucket!r}"
    if status >= 500:
        attempts = int(metadata.get("RetryAttempts", 0)) + 1
        return f"server error {status} ({code}) after {attempts} attempts"
    message = error.response.get("Error", {}).get("Message", "")
    return f"{code} (HTTP {status}): {message}" if message else f"{code} (HTTP {status})"


def is_not_found(error: ClientError) -> bool:
    return error_code(error) in NOT_FOUND_CODES


def translate(error: Exception, where: str, action: str, bucket: str, attempts: int) -> StorageError:
    """One line naming the object, what we tried and why it failed (cf. s3fs translate_boto_error)."""
    kind: type[StorageError] = StorageError
    if isinstance(error, ClientError) and is_not_found(error):
        kind = ObjectNotFound
    elif isinstance(error, ClientError) and error_code(error) in DENIED_CODES:
        kind = AccessDenied
    failure = kind(one_line(f"{where}: cannot {action}: {describe(error, bucket, attempts)}"))
    failure.__cause__ = error
    return failure


def object_uri(bucket: str, key: str) -> str:
    return f"{SCHEME}://{bucket}/{key}"


def list_entries(client: S3Client, bucket: str, prefix: str) -> Iterator[tuple[str, Entry]]:
    """(key, size and last modified) of every object under `prefix`, without the zero-byte
    "folder" markers consoles make."""
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for entry in page.get("Contents", []):
            if not entry["Key"].endswith("/"):
                yield entry["Key"], Entry(entry["Size"], entry["LastModified"].timestamp())


def list_keys(client: S3Client, bucket: str, prefix: str) -> Iterator[str]:
    return (key for key, _ in list_entries(client, bucket, prefix))


class _Located:
    """What sources and stores share: one bucket, a connection, and one way to fail."""

    def __init__(self, connection: Connection, bucket: str) -> None:
        self._connection = connection
        self._bucket = bucket

    @property
    def _client(self) -> S3Client:
        return self._connection.client

    def _where(self) -> str:
        raise NotImplementedError

    def _fail(self, action: str, error: Exception) -> StorageError:
        return translate(error, self._where(), action, self._bucket, self._connection.attempts)

    def _call(self, action: str, call: Callable[[], T]) -> T:
        """Run one boto3 call; any boto error becomes our one-line StorageError."""
        try:
            return call()
        except BOTO_ERRORS as error:
            raise self._fail(action, error) from error


class _BodyReader(io.RawIOBase):
    """A botocore streaming body as a raw stream whose read errors are StorageErrors.

    Wrapped in a BufferedReader by `S3Source.open`, so readers can read chunks or lines while
    the object streams from the network, never held whole unless they ask for all of it.
    """

    def __init__(self, body: StreamingBody, fail: Callable[[str, Exception], StorageError]) -> None:
        super().__init__()
        self._body = body
        self._fail = fail

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self._read(len(view))
        view[: len(data)] = data
        return len(data)

    def readall(self) -> bytes:
        # One read of the rest, so `read()` of a whole object does not copy it chunk by chunk.
        return self._read(None)

    def _read(self, size: int | None) -> bytes:
        try:
            return self._body.read(size)
        except BOTO_ERRORS as error:
            raise self._fail("read", error) from error

    def close(self) -> None:
        if not self.closed:
            self._body.close()
        super().close()


class _S3Ranges(RangedFile):
    """An S3 object read with ranged GETs that must match its ETag (a rewritten object fails
    them). A forked worker makes a client of its own: it must not share the parent's sockets."""

    def __init__(self, connection: Connection, bucket: str, key: str, size: int, etag: str) -> None:
        self._connection, self._bucket, self._key = connection, bucket, key
        self._size, self._etag = size, etag
        self._process = os.getpid()

    @property
    def size(self) -> int:
        return self._size

    def _client(self) -> S3Client:
        if os.getpid() != self._process:
            self._connection = Connection.create(self._connection.attempts)
            self._process = os.getpid()
        return self._connection.client

    def read(self, start: int, stop: int) -> bytes:
        if start >= stop:
            return b""
        try:
            answer = self._client().get_object(
                Bucket=self._bucket, Key=self._key, Range=f"bytes={start}-{stop - 1}", IfMatch=self._etag
            )
            return bytes(answer["Body"].read())
        except (*BOTO_ERRORS, StorageError) as error:
            raise OSError(one_line(f"{object_uri(self._bucket, self._key)}: {error}")) from error

    def unchanged(self) -> bool:
        try:
            return self._client().head_object(Bucket=self._bucket, Key=self._key)["ETag"] == self._etag
        except (*BOTO_ERRORS, StorageError):
            return False


class S3Source(_Located, Source):
    """`s3://bucket/key` (an object) or `s3://bucket/prefix/` (every object under it).

    A key without a trailing slash is a folder only when no object has that key but objects
    exist under `key/`, so a YOLO labels folder can be named either way.
    """

    def __init__(self, connection: Connection, bucket: str, key: str, *, folder: bool | None = None) -> None:
        super().__init__(connection, bucket)
        self._key = key
        self._folder = folder
        self._head: tuple[int, str] | None = None  # (size, ETag) when the probe saw an object

    @classmethod
    def from_uri(cls, uri: str) -> S3Source:
        bucket, key = parse_uri(uri)
        return cls(Connection.create(), bucket, key)

    @property
    def name(self) -> str:
        return object_uri(self._bucket, self._key)

    @property
    def basename(self) -> str:
        return self._key.rstrip("/").rsplit("/", 1)[-1]

    def _where(self) -> str:
        return self.name

    def _folder_prefix(self) -> str:
        return self._key if self._key == "" or self._key.endswith("/") else f"{self._key}/"

    def is_dir(self) -> bool:
        if self._folder is None:
            self._folder = self._probe_is_dir()
        return self._folder

    def _probe_is_dir(self) -> bool:
        if self._key == "" or self._key.endswith("/"):
            return self._has_objects_under(self._folder_prefix())
        try:
            answer = self._client.head_object(Bucket=self._bucket, Key=self._key)
        except ClientError as error:
            if is_not_found(error):
                return self._has_objects_under(self._folder_prefix())
            if error_code(error) in DENIED_CODES:
                # HEAD answers carry no error code; `open()` will GET and name the exact cause.
                return False
            raise self._fail("look up the object", error) from error
        except BotoCoreError as error:
            raise self._fail("look up the object", error) from error
        self._head = (answer["ContentLength"], answer["ETag"])
        return False  # an object with this key wins over a folder of the same name

    def _has_objects_under(self, prefix: str) -> bool:
        answer = self._call(
            "look up the folder",
            lambda: self._client.list_objects_v2(Bucket=self._bucket, Prefix=prefix, MaxKeys=1),
        )
        return answer.get("KeyCount", 0) > 0

    def files(self, depth: int | None = None) -> list[Source]:
        if not self.is_dir():
            return []
        prefix = self._folder_prefix()
        keys = self._call("list the folder", lambda: list(list_keys(self._client, self._bucket, prefix)))
        if depth is not None:  # S3 lists flat: the keys deeper than `depth` folders are left out
            keys = [key for key in keys if key[len(prefix) :].count("/") <= depth]
        keys.sort(key=path_order)
        return [S3Source(self._connection, self._bucket, key, folder=False) for key in keys]

    def child(self, relative: str) -> Source:
        return S3Source(self._connection, self._bucket, self._folder_prefix() + relative, folder=False)

    def ranged(self) -> RangedFile | None:
        if self._key == "" or self._key.endswith("/"):
            return None
        if self._head is None:
            try:
                answer = self._client.head_object(Bucket=self._bucket, Key=self._key)
            except BOTO_ERRORS:
                return None  # reading it whole says why
            self._head = (answer["ContentLength"], answer["ETag"])
        return _S3Ranges(self._connection, self._bucket, self._key, *self._head)

    def open(self) -> BinaryIO:
        if self._key.endswith("/"):  # a folder that `is_dir` found empty
            raise ObjectNotFound(
                f"{self.name}: no objects under this prefix: expected the dataset's files there"
            )
        answer = self._call("read", lambda: self._client.get_object(Bucket=self._bucket, Key=self._key))
        return io.BufferedReader(_BodyReader(answer["Body"], self._fail), STREAM_BUFFER_BYTES)


class S3Store(_Located, Store):
    """`s3://bucket/prefix`: every key of the store lives under `prefix/`."""

    def __init__(self, connection: Connection, bucket: str, prefix: str) -> None:
        super().__init__(connection, bucket)
        self._prefix = prefix.strip("/")

    @classmethod
    def from_uri(cls, uri: str) -> S3Store:
        bucket, prefix = parse_uri(uri)
        return cls(Connection.create(), bucket, prefix)

    @classmethod
    def source_at(cls, uri: str) -> Source:
        return S3Source.from_uri(uri)

    @property
    def uri(self) -> str:
        return object_uri(self._bucket, self._prefix) if self._prefix else f"{SCHEME}://{self._bucket}"

    def _full(self, key: str) -> str:
        return f"{self._prefix}/{key}" if self._prefix else key

    def _failure(self, key: str, action: str, error: Exception, attempts: int | None = None) -> StorageError:
        attempts = attempts or self._connection.attempts
        return translate(error, self.url(key), action, self._bucket, attempts)

    def _attempt(self, key: str, action: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except BOTO_ERRORS as error:
            raise self._failure(key, action, error) from error

    def source(self, key: str) -> Source:
        return S3Source(self._connection, self._bucket, self._full(key))

    def put(self, key: str, content: Content, content_type: str) -> None:
        full = self._full(key)

        def upload(body: bytes | BinaryIO) -> None:
            put = partial(self._client.put_object, Bucket=self._bucket, Key=full, ContentType=content_type)
            self._attempt(key, "write", lambda: put(Body=body))

        if isinstance(content, bytes):
            upload(content)
            return
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
            for chunk in content:
                spool.write(chunk)
            spool.seek(0)
            upload(spool)  # type: ignore[arg-type]  # SpooledTemporaryFile is a binary file

    def exists(self, key: str) -> bool:
        try:
            self._client.head_object(Bucket=self._bucket, Key=self._full(key))
        except BOTO_ERRORS as error:
            if isinstance(error, ClientError) and is_not_found(error):
                return False
            raise self._failure(key, "look up", error) from error
        return True

    def delete(self, keys: Iterable[str]) -> None:
        client = Connection.create(DELETE_ATTEMPTS).client
        first: StorageError | None = None
        for key in keys:
            try:
                client.delete_object(Bucket=self._bucket, Key=self._full(key))
            except BOTO_ERRORS as error:
                first = first or self._failure(key, "delete", error, DELETE_ATTEMPTS)
        if first is not None:
            raise first

    def entries(self, prefix: str) -> dict[str, Entry]:
        folder = self._full(prefix.rstrip("/") + "/") if prefix.strip("/") else self._full("")
        entries = self._attempt(
            prefix, "list", lambda: list(list_entries(self._client, self._bucket, folder))
        )
        start = len(self._prefix) + 1 if self._prefix else 0
        return {key[start:]: entry for key, entry in entries}
