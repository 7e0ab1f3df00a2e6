// The shared test helpers (ReadinessCounter, PeripheralManager.deliver, the waits) for every file here.
@_exported import TestSupport
