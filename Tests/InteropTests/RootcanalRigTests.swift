import BluetoothCore
import BluetoothHCI
import BluetoothTransport
import Foundation
import Testing

extension InteropSuites {
    /// The Rootcanal rig itself (Support/Rootcanal.swift): how it starts and ends, what every
    /// connection gets, and how fast our TCP transport hears it.
    @Suite("Rootcanal rig")
    struct RootcanalRigTests {
        @Test("Its HCI port is read from its log: the server after \"Opening an HCI\"")
        func hciPortFromLog() {
            let log = [
                "root-canal I 11-27 15:34:43.376 posix_async_socket_server.cc:79          Listening on: 41401 (3)",
                "root-canal I 11-27 15:34:43.376 posix_async_socket_server.cc:79          Listening on: 35967 (4)",
                "root-canal I 11-27 15:34:43.376 test_environment.cc:105                  Opening an HCI with port 0",
                "root-canal I 11-27 15:34:43.376 posix_async_socket_server.cc:79          Listening on: 45217 (6)",
                "root-canal I 11-27 15:34:43.397 test_environment.cc:186                  initialize: Finished",
            ]
            #expect(Rootcanal.hciPort(inLog: log) == 45217)
            #expect(Rootcanal.hciPort(inLog: Array(log.prefix(3))) == nil, "no server after the HCI line")
            #expect(Rootcanal.hciPort(inLog: Array(log.prefix(2))) == nil, "no HCI line")
        }

        @Test("Every connection is a controller of its own with its own public address; shutdown ends it all")
        func controllerPerConnection() async throws {
            let rootcanal = try await Rootcanal.start()
            let directory = rootcanal.directory
            do {
                #expect(FileManager.default.fileExists(atPath: directory.path))
                let first = HCIController(transport: try SystemTransports.open(rootcanal.transportSpecification))
                let second = HCIController(transport: try SystemTransports.open(rootcanal.transportSpecification))
                first.start()
                second.start()
                let firstAddress = try await first.send(ReadBDADDRCommand()).address
                let secondAddress = try await second.send(ReadBDADDRCommand()).address
                first.close()
                second.close()
                #expect(firstAddress != secondAddress)
                #expect(firstAddress != .zero && secondAddress != .zero)
            } catch {
                await rootcanal.shutdown()
                throw error
            }
            await rootcanal.shutdown()
            #expect(rootcanal.hasEnded)
            #expect(!FileManager.default.fileExists(atPath: directory.path), "the scratch directory is removed")
            #expect(throws: TransportError.self, "nothing listens on the HCI port any more") {
                _ = try SystemTransports.open(rootcanal.transportSpecification)
            }
        }

        /// Rootcanal leaves Nagle's algorithm on and writes an HCI packet in more than one piece:
        /// the second piece waits for the first one's ACK, which a receiver delays up to 40 ms
        /// (Linux's delayed ACK). Our TCP transport acknowledges every read at once, so a command
        /// is answered in well under that; without it, every answer takes 40 ms or more.
        @Test("HCI commands to Rootcanal over TCP are answered without the delayed-ACK stall")
        func commandRoundTrip() async throws {
            try await using(try await Rootcanal.start()) { rootcanal in
                let controller = HCIController(transport: try SystemTransports.open(rootcanal.transportSpecification))
                controller.start()
                var times: [Duration] = []
                for _ in 0..<21 {
                    let start = ContinuousClock.now
                    _ = try await controller.send(ReadBDADDRCommand())
                    times.append(ContinuousClock.now - start)
                }
                controller.close()
                let median = times.sorted()[times.count / 2]
                #expect(median < .milliseconds(25), "median \(median) of \(times)")
            }
        }
    }
}
