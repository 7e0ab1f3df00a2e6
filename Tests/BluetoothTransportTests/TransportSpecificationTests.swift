import BluetoothTransport
import Testing

@Suite("Transport specification strings", .timeLimit(.minutes(1)))
struct TransportSpecificationTests {
    @Test(arguments: [
        ("tcp:127.0.0.1:9000", TransportSpecification.tcp(host: "127.0.0.1", port: 9000)),
        ("tcp:localhost:1", .tcp(host: "localhost", port: 1)),
        ("tcp:controller.local:65535", .tcp(host: "controller.local", port: 65535)),
        ("tcp:[::1]:9000", .tcp(host: "::1", port: 9000)),
        ("tcp:[fe80::1%eth0]:1234", .tcp(host: "fe80::1%eth0", port: 1234)),
        ("unix:/tmp/bumble.sock", .unix(path: "/tmp/bumble.sock")),
        ("unix:relative.sock", .unix(path: "relative.sock")),
        ("serial:/dev/ttyACM0", .serial(path: "/dev/ttyACM0", baudRate: 1_000_000)),
        ("serial:/dev/ttyACM0@115200", .serial(path: "/dev/ttyACM0", baudRate: 115_200)),
        ("serial:/dev/ttyUSB1@1000000", .serial(path: "/dev/ttyUSB1", baudRate: 1_000_000)),
        ("hci0", .hciUserChannel(index: 0)),
        ("hci12", .hciUserChannel(index: 12)),
        ("virtual", .virtual(name: nil)),
        ("virtual:peripheral", .virtual(name: "peripheral")),
        ("  tcp:127.0.0.1:9000 ", .tcp(host: "127.0.0.1", port: 9000)),
    ])
    func parses(text: String, expected: TransportSpecification) throws {
        #expect(try TransportSpecification(parsing: text) == expected)
    }

    @Test func serialDefaultBaudRateIsOneMegabaud() {
        #expect(TransportSpecification.defaultSerialBaudRate == 1_000_000)
    }

    @Test(arguments: [
        "",
        "   ",
        "foo:bar",
        "tcp:localhost",
        "tcp:localhost:",
        "tcp::9000",
        "tcp:localhost:0",
        "tcp:localhost:70000",
        "tcp:localhost:port",
        "tcp:[::1]",
        "unix:",
        "serial:",
        "serial:@115200",
        "serial:/dev/x@abc",
        "serial:/dev/x@",
        "serial:/dev/x@0",
        "serial:/dev/x@-9600",
        "hci",
        "hcix",
        "hci70000",
        "bluetooth",
    ])
    func rejects(text: String) {
        #expect(throws: TransportError.self) { try TransportSpecification(parsing: text) }
    }

    @Test func rejectionNamesTheInputAndTheSupportedForms() throws {
        let error = try #require(throws: TransportError.self) { try TransportSpecification(parsing: "tcp:localhost:70000") }
        guard case let .invalidSpecification(text, reason) = error else {
            Issue.record("expected invalidSpecification, got \(error)")
            return
        }
        #expect(text == "tcp:localhost:70000")
        #expect(reason.contains("port"))
        #expect(error.description.contains("tcp:HOST:PORT"))
    }

    @Test(arguments: [
        ("tcp:127.0.0.1:9000", "tcp:127.0.0.1:9000"),
        ("tcp:[::1]:9000", "tcp:[::1]:9000"),
        // Found by fuzzing (FuzzStrings): a host in two pairs of brackets printed with one, which
        // parses as another host.
        ("tcp:[[a]]:1", "tcp:[[a]]:1"),
        ("unix:/tmp/bumble.sock", "unix:/tmp/bumble.sock"),
        ("serial:/dev/ttyACM0", "serial:/dev/ttyACM0"),
        ("serial:/dev/ttyACM0@1000000", "serial:/dev/ttyACM0"),
        ("serial:/dev/ttyACM0@115200", "serial:/dev/ttyACM0@115200"),
        ("hci3", "hci3"),
        ("virtual", "virtual"),
        ("virtual:peripheral", "virtual:peripheral"),
    ])
    func descriptionIsCanonical(text: String, description: String) throws {
        let specification = try TransportSpecification(parsing: text)
        #expect(specification.description == description)
        // And the description parses back to the same value.
        #expect(try TransportSpecification(parsing: specification.description) == specification)
    }
}
