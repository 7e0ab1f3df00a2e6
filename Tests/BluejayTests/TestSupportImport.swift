// The shared test helpers and the README's HeartRateMeasurement for every file here.
@_exported import TestSupport
