import BluetoothTransport
import Testing

@Suite("System transports entry point", .timeLimit(.minutes(1)))
struct SystemTransportsTests {
    @Test(arguments: ["virtual", "virtual:peripheral"])
    func virtualIsLeftToTheHigherLayers(text: String) throws {
        let error = try #require(throws: TransportError.self) { _ = try SystemTransports.open(text) }
        let reason = try #require(error.invalidSpecificationReason, "got \(error)")
        #expect(reason.contains("Bluejay layer"))
    }

    @Test func malformedTextIsInvalidSpecification() throws {
        let error = try #require(throws: TransportError.self) { _ = try SystemTransports.open("tcp:localhost") }
        #expect(error.invalidSpecificationReason != nil, "got \(error)")
    }

    @Test func eachKindOfSpecificationReachesItsOpener() throws {
        // Every path is missing, so each opener fails in its own recognisable way.
        let unix = try #require(throws: TransportError.self) { _ = try SystemTransports.open(.unix(path: "/nonexistent/bluejay.sock")) }
        #expect(unix.openFailure?.hint.contains("/nonexistent/bluejay.sock") == true, "got \(unix)")
        let serial = try #require(throws: TransportError.self) { _ = try SystemTransports.open(.serial(path: "/nonexistent/tty", baudRate: 115_200)) }
        #expect(serial.openFailure?.hint.contains("dongle") == true || serial.openFailure?.hint.contains("plugged in") == true, "got \(serial)")
        let hci = try #require(throws: TransportError.self) { _ = try SystemTransports.open(.hciUserChannel(index: 77)) }
        #expect(hci.description.hasPrefix("cannot open hci77"), "got \(hci)")
    }
}
