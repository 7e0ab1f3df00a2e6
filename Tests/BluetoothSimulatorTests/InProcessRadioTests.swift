import Bluejay
import BluetoothSimulator
import Testing

/// `InProcessRadio.openTransport(name:)` is public so that the CLI opens `--hci virtual` the
/// way Bluejay does (no `@testable` here: this checks the public API).
@Suite("The in-process radio, as the CLI uses it", .timeLimit(.minutes(1)))
struct InProcessRadioTests {
    @Test("openTransport opens `virtual:NAME` on the shared link, where a Simulator can place peripherals")
    func openTransport() throws {
        let named = try InProcessRadio.openTransport(name: "simulator-open-test")
        #expect(named.name == "virtual:simulator-open-test")
        #expect(InProcessRadio.link.controllers.contains(InProcessRadio.controller(named: "simulator-open-test")))
        let simulator = Simulator(link: InProcessRadio.link)
        #expect(simulator.link === InProcessRadio.link)
        named.close()
    }
}
