// The shared test helpers (withTestTimeout, AwaitableLog, eventually) for every file here.
@_exported import TestSupport
