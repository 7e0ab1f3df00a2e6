// The shared test helpers (the waits, AwaitableLog, TestGate) for every file here.
@_exported import TestSupport
