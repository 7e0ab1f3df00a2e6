// The shared test helpers (withTimeout, waitUntil, eventually, AwaitableLog) for every file here.
@_exported import TestSupport
