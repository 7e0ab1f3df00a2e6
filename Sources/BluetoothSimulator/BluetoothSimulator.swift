// The BluetoothSimulator module.
