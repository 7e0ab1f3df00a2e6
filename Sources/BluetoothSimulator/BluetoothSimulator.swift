// BluetoothSimulator: peripherals declared in code, running on virtual LE controllers, for
// app tests and demos without hardware (what Nordic's CoreBluetooth mock gives iOS apps).
//
// Layout
//   Simulator                 a VirtualLink with simulated peripherals and the app's central
//                             controller(s): `centralTransport()` is what Bluejay starts on
//   Declaration/              what a peripheral is: SimulatedPeripheral (name, advertising,
//                             services), SimulatedService, SimulatedCharacteristic (values,
//                             read/write handlers, response delays), SimulatedRead/Write
//   Device/                   SimulatedDevice, a declaration brought to life: its own
//                             VirtualController (or any HCI transport), LEHost and
//                             PeripheralManager; values, notifications, events, injected
//                             failures (FailurePlan), position and link faults
//   Devices/                  built-in devices: HeartRateSensor, UARTDevice
//
// Everything a test needs comes with `import BluetoothSimulator`: the peripheral API
// (BluetoothPeripheral, and through it the host's value types and GATTProfiles) and the
// virtual link (BluetoothVirtual).
@_exported import BluetoothPeripheral
@_exported import BluetoothVirtual
