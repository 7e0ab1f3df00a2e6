import ArgumentParser
import Bluejay

/// `bluejay`: scan, explore and drive Bluetooth LE devices from the command line.
@main
struct BluejayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluejay",
        abstract: "Bluetooth LE from the command line: scan, explore GATT, read, write, listen, pair.",
        discussion: """
        Every command talks to a controller through --hci TRANSPORT (or the BLUEJAY_HCI \
        environment variable): tcp:HOST:PORT, unix:PATH, serial:DEVICE[@BAUD], hciN, or virtual. \
        `bluejay adapters` lists this machine's adapters. --capture FILE (or BLUEJAY_CAPTURE) \
        records the HCI traffic in a btsnoop file for Wireshark.
        """,
        version: Bluejay.version,
        subcommands: [
            ScanCommand.self, GATTCommand.self, ReadCommand.self, WriteCommand.self, ListenCommand.self,
            PairCommand.self, BondsCommand.self, LinkCommand.self, L2CAPCommand.self, DemoCommand.self, SensorCommand.self, VirtualCommand.self, AdaptersCommand.self,
            AdvertiseCommand.self,
        ]
    )
}
