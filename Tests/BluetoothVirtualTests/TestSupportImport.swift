// The shared test helpers (TwoDevices, FilteringTransport, TestAddresses, the waits) for every file here.
@_exported import TestSupport
