// The BluetoothVirtual module.
