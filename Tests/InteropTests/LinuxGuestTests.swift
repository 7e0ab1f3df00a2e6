import Foundation
import Testing

extension GuestSuites {
    /// The kernel's HCI user channel, for real: a Linux guest under QEMU whose hci0 is the
    /// rig's controller A (through hci_vhci), running our `bluejay` and a Bluejay app as
    /// `--hci hci0` against Bumble peripherals on the host side of the link. One boot for the
    /// whole suite (docs/LINUX-GUEST.md); each test runs its commands in the guest and checks
    /// their machine-readable output, the rig's events and what controller A is left doing.
    ///
    /// Peripherals: B1 the CLI's GATT operations, B2 the Bluejay app, B3 pairing, B4 the
    /// process killed mid-connection (each test its own, so no test sees another's links).
    @Suite(
        "The HCI user channel in a Linux guest",
        .enabled(if: LinuxGuest.shouldRun, "the Linux guest is not built: `bash scripts/linux-guest.sh build` (make test builds it)"),
        .linuxGuest(peripherals: 4, rigArguments: ["--plugin", "bluejay_pairing"])
    )
    struct LinuxGuestTests {
        static let peripheral1 = "F0:00:00:00:00:01"
        static let peripheral2 = "F0:00:00:00:00:02"
        static let peripheral3 = "F0:00:00:00:00:03"
        static let peripheral4 = "F0:00:00:00:00:04"
        /// controller A's public address, which the kernel reads as hci0's.
        static let adapterAddress = "F0:F1:F2:F3:F4:01"

        @Test("bluejay adapters lists hci0, down and ready")
        func adaptersListsTheAdapter() async throws {
            let bench = try GuestBench.require()
            let listed = try await bench.guest.run("bluejay adapters --json")
            #expect(listed.status == 0, "\(listed)")
            let adapters = try listed.jsonObjects()
            #expect(adapters.count == 1, "\(listed)")
            let adapter = try #require(adapters.first)
            #expect(adapter["name"] as? String == "hci0")
            #expect(adapter["index"] as? Int == 0)
            #expect(adapter["address"] as? String == Self.adapterAddress)
            #expect(adapter["bus"] as? String == "virtual")
            #expect(adapter["up"] as? Bool == false)
            #expect(adapter["ready"] as? Bool == true)
            #expect((adapter["next"] as? [String])?.contains("ready: use --hci hci0") == true, "\(listed)")
        }

        @Test("An adapter BlueZ keeps up is refused with the advice to take it down; after btmgmt power off it opens with bluetoothd running")
        func adapterHeldByBlueZ() async throws {
            let bench = try GuestBench.require()
            let guest = bench.guest
            let started = try await guest.run("start-bluez && btmgmt --index 0 power on")
            #expect(started.status == 0, "\(started)")
            do {
                let listed = try await guest.run("bluejay adapters --json")
                let adapter = try #require(try listed.jsonObjects().first, "\(listed)")
                #expect(adapter["up"] as? Bool == true && adapter["ready"] as? Bool == false, "\(listed)")
                let advice = (adapter["next"] as? [String] ?? []).joined(separator: "\n")
                #expect(advice.contains("btmgmt --index 0 power off") && advice.contains("bluetoothd"), "\(listed)")

                let refused = try await guest.run("bluejay scan --hci hci0 --duration 1")
                #expect(refused.status == 74, "\(refused)")
                for advice in ["Device or resource busy", "btmgmt --index 0 power off", "bluetoothctl", "power off", "bluetoothd"] {
                    #expect(refused.stderr.contains(advice), "the refusal should say \"\(advice)\": \(refused)")
                }

                let poweredOff = try await guest.run("btmgmt --index 0 power off && pidof bluetoothd")
                #expect(poweredOff.status == 0, "bluetoothd should still run: \(poweredOff)")
                let scan = try await guest.run("bluejay scan --hci hci0 --duration 2 --json")
                #expect(scan.status == 0, "\(scan)")
                let addresses = try scan.jsonObjects().compactMap { $0["address"] as? String }
                #expect(addresses.contains(Self.peripheral1), "\(scan)")
            } catch {
                _ = try? await guest.run(Self.stopBlueZ)
                throw error
            }
            let stopped = try await guest.run(Self.stopBlueZ)
            #expect(stopped.status == 0, "\(stopped)")
        }

        /// Stops bluetoothd and leaves hci0 down (bluetoothd powers an adapter on again when
        /// the user channel lets it go).
        static let stopBlueZ = """
            kill $(pidof bluetoothd) 2> /dev/null
            for _ in $(seq 50); do pidof bluetoothd > /dev/null || break; sleep 0.1; done
            ! pidof bluetoothd && btmgmt --index 0 power off > /dev/null && hciconfig hci0 | grep -q DOWN
            """

        @Test("scan, connect, GATT read, write and notify over hci0 with the CLI")
        func cliOverHCI0() async throws {
            let bench = try GuestBench.require()
            let (rig, guest) = (bench.rig, bench.guest)
            let scan = try await guest.run("bluejay scan --hci hci0 --duration 3 --json")
            #expect(scan.status == 0, "\(scan)")
            let seen = try scan.jsonObjects()
            for index in 1...4 {
                #expect(seen.contains { $0["name"] as? String == "Bluejay Peer \(index)" && $0["address"] as? String == "F0:00:00:00:00:0\(index)" },
                        "peripheral \(index) not seen: \(scan)")
            }

            let read = try await guest.run("bluejay read --hci hci0 --address \(Self.peripheral1) --random --service 180A --characteristic 2A25 --format utf8")
            #expect(read.status == 0 && read.stdout == "SN-0001\n", "\(read)")

            // 600 octets through Read Blob: many ACL packets each way through the kernel.
            let long = try await guest.run("bluejay read --hci hci0 --address \(Self.peripheral1) --random --json "
                + "--service 6E400001-B5A3-F393-E0A9-E50E24DCCA9E --characteristic 6E400004-B5A3-F393-E0A9-E50E24DCCA9E")
            #expect(long.status == 0, "\(long)")
            let expected = (0..<600).map { String(format: "%02x", $0 % 256) }.joined()
            #expect(try long.jsonObjects().first?["value"] as? String == expected, "\(long)")

            let write = try await guest.run("bluejay write --hci hci0 --address \(Self.peripheral1) --random --service 180D --characteristic 2A38 --value 02")
            #expect(write.status == 0, "\(write)")
            let written = try await rig.waitForEvent(named: "written", matching: { $0.int("peripheral") == 1 && $0.string("uuid") == "2A38" })
            #expect(written.bytes("value") == [0x02])

            rig.discardEvents(named: "subscribed")
            let listen = bench.start("bluejay listen --hci hci0 --address \(Self.peripheral1) --random --service 180D --characteristic 2A37 --count 3 --json")
            try await listen.event(named: "subscribed", matching: { $0.int("peripheral") == 1 && $0.bool("notify") == true })
            try await listen.request(.notify(uuid: "2A37", count: 3, start: 70, peripheral: 1))
            let listened = try await listen.result
            #expect(listened.status == 0, "\(listened)")
            #expect(try listened.jsonObjects().compactMap { $0["value"] as? String } == ["014600", "014700", "014800"], "\(listened)")
            try await Self.expectClean(bench, after: "bluejay listen")
        }

        @Test("A Bluejay app scans, connects, reads, writes and listens over hci0")
        func bluejayAppOverHCI0() async throws {
            let bench = try GuestBench.require()
            let rig = bench.rig
            rig.discardEvents(named: "subscribed")
            let app = bench.start("BluejayGuestApp --hci hci0 --name 'Bluejay Peer 2' --notifications 3")
            try await app.event(named: "subscribed", matching: { $0.int("peripheral") == 2 && $0.bool("notify") == true })
            try await app.request(.notify(uuid: "2A37", count: 3, start: 1, peripheral: 2))
            let result = try await app.result
            #expect(result.status == 0, "\(result)")
            let steps = try result.jsonObjects()
            #expect(steps.compactMap { $0["step"] as? String }
                == ["ready", "found", "connected", "read", "written", "listening", "notification", "notification", "notification", "disconnected", "stopped"],
                "\(result)")
            #expect(steps.first { $0["step"] as? String == "found" }?["address"] as? String == Self.peripheral2, "\(result)")
            let read = steps.first { $0["step"] as? String == "read" }
            #expect(read?["serial"] as? String == "SN-0002" && read?["callback_serial"] as? String == "SN-0002", "async and callback API: \(result)")
            #expect(steps.first { $0["step"] as? String == "written" }?["location"] as? Int == 3, "\(result)")
            #expect(steps.filter { $0["step"] as? String == "notification" }.compactMap { $0["value"] as? String } == ["010100", "010200", "010300"])
            let written = try await rig.waitForEvent(named: "written", matching: { $0.int("peripheral") == 2 && $0.string("uuid") == "2A38" })
            #expect(written.bytes("value") == [0x03])
            try await Self.expectClean(bench, after: "BluejayGuestApp")
        }

        @Test("Pairing over hci0 (passkey entry) stores a bond; a new process re-encrypts with it")
        func pairingOverHCI0() async throws {
            let bench = try GuestBench.require()
            let (rig, guest) = (bench.rig, bench.guest)
            _ = try await rig.request("pairing_config", ["io": "display", "mitm": true, "passkey": 123_456])
            do {
                let paired = try await guest.run("bluejay pair --hci hci0 --address \(Self.peripheral3) --random --io keyboard --passkey 123456 "
                    + "--bond-directory /root/bonds --json")
                #expect(paired.status == 0, "\(paired)")
                let result = try #require(try paired.jsonObjects().first, "\(paired)")
                #expect(result["authenticated"] as? Bool == true && result["bonded"] as? Bool == true && result["keySize"] as? Int == 16, "\(paired)")

                let read = try await guest.run("bluejay read --hci hci0 --address \(Self.peripheral3) --random --bond-directory /root/bonds "
                    + "--service 6E400301-B5A3-F393-E0A9-E50E24DCCA9E --characteristic 6E400303-B5A3-F393-E0A9-E50E24DCCA9E --format utf8")
                #expect(read.status == 0 && read.stdout == "top secret\n", "\(read)")
                #expect(rig.receivedEvents.filter { $0.name == "pairing_done" }.count == 1, "one pairing only: the read used the bond")
            } catch {
                _ = try? await rig.request("pairing_config", ["io": "none", "mitm": false])
                throw error
            }
            _ = try await rig.request("pairing_config", ["io": "none", "mitm": false])
            try await Self.expectClean(bench, after: "bluejay read with a bond")
        }

        @Test("The user channel closes and opens again, five times in a row")
        func reopenedSeveralTimes() async throws {
            let bench = try GuestBench.require()
            // One line per round: the round, the read's status and value, and hci0's state after it.
            let rounds = try await bench.guest.run("""
                for round in 1 2 3 4 5; do
                    value=$(bluejay read --hci hci0 --address \(Self.peripheral1) --random --service 180A --characteristic 2A25 --format utf8)
                    status=$?
                    echo "round=$round status=$status value=$value state=$(hciconfig hci0 | grep -oE 'UP|DOWN' | head -1)"
                done
                """, timeout: .seconds(300))
            #expect(rounds.status == 0, "\(rounds)")
            #expect(rounds.lines == (1...5).map { "round=\($0) status=0 value=SN-0001 state=DOWN" }, "\(rounds)")
        }

        @Test("After a process is killed (SIGKILL) mid-connection, the next process opens the adapter and works")
        func killedMidConnection() async throws {
            let bench = try GuestBench.require()
            let (rig, guest) = (bench.rig, bench.guest)
            rig.discardEvents(named: "subscribed")
            let killed = bench.start("""
                bluejay listen --hci hci0 --address \(Self.peripheral4) --random --service 180D --characteristic 2A37 > /tmp/listen.log 2>&1 &
                echo $! > /tmp/listen.pid
                wait $!
                status=$?
                cat /tmp/listen.log >&2
                exit $status
                """)
            try await killed.event(named: "subscribed", matching: { $0.int("peripheral") == 4 && $0.bool("notify") == true })
            let kill = try await guest.run("kill -KILL $(cat /tmp/listen.pid)")
            #expect(kill.status == 0, "\(kill)")
            let died = try await killed.result
            #expect(died.status == 137, "the listen should have died of SIGKILL: \(died)")

            // Nobody disconnected: the kernel closed the user channel and took hci0 down, but the
            // link is still up in the controller (Linux resets a controller on close only when its
            // driver asks), so the next process finds it there.
            let left = try await rig.request("host_controller")
            #expect(left["connections"]?.arrayValue?.count == 1, "\(left)")

            let read = try await guest.run("bluejay read --hci hci0 --address \(Self.peripheral4) --random --service 180A --characteristic 2A25 --format utf8")
            #expect(read.status == 0 && read.stdout == "SN-0004\n", "\(read)")
            // The old link ended when the new process reset the controller, the new one came and went.
            _ = try await rig.waitForEvent(named: "disconnected", matching: { $0.int("peripheral") == 4 })
            _ = try await rig.waitForEvent(named: "connected", matching: { $0.int("peripheral") == 4 })
            try await Self.expectClean(bench, after: "bluejay read after a SIGKILL")
        }

        @Test("While a process holds hci0's user channel, another is told so (not that BlueZ holds it), and so is bluejay adapters")
        func secondProcessWhileTheChannelIsHeld() async throws {
            let bench = try GuestBench.require()
            let (rig, guest) = (bench.rig, bench.guest)
            rig.discardEvents(named: "subscribed")
            let holder = bench.start("""
                bluejay listen --hci hci0 --address \(Self.peripheral1) --random --service 180D --characteristic 2A37 > /tmp/holder.log 2>&1 &
                echo $! > /tmp/holder.pid
                wait $!
                status=$?
                cat /tmp/holder.log >&2
                exit $status
                """)
            try await holder.event(named: "subscribed", matching: { $0.int("peripheral") == 1 && $0.bool("notify") == true })

            let second = try await guest.run("bluejay read --hci hci0 --address \(Self.peripheral2) --random --service 180A --characteristic 2A25")
            #expect(second.status == 74, "\(second)")
            #expect(second.stderr.contains("Device or resource busy") && second.stderr.contains("user channel"), "\(second)")
            #expect(!second.stderr.contains("BlueZ"), "BlueZ does not hold it: \(second)")

            let listed = try await guest.run("bluejay adapters --json")
            let adapter = try #require(try listed.jsonObjects().first, "\(listed)")
            #expect(adapter["up"] as? Bool == true && adapter["user_channel"] as? Bool == true && adapter["ready"] as? Bool == false, "\(listed)")
            #expect((adapter["next"] as? [String] ?? []).joined().contains("user channel"), "\(listed)")

            let stopped = try await guest.run("kill -TERM $(cat /tmp/holder.pid)")
            #expect(stopped.status == 0, "\(stopped)")
            let held = try await holder.result
            #expect(held.status == 0, "bluejay listen should exit 0 on SIGTERM: \(held)")
            try await Self.expectClean(bench, after: "bluejay listen and SIGTERM")
        }

        @Test("On exit, also on SIGTERM and SIGINT, the adapter is left clean: no scan, advertising or link still running")
        func exitLeavesTheAdapterClean() async throws {
            let bench = try GuestBench.require()
            let (rig, guest) = (bench.rig, bench.guest)
            let scanned = try await guest.run("bluejay scan --hci hci0 --duration 1")
            #expect(scanned.status == 0, "\(scanned)")
            try await Self.expectClean(bench, after: "bluejay scan --duration 1")

            let advertised = try await guest.run("bluejay advertise --hci hci0 --name GuestAd --connectable --seconds 1")
            #expect(advertised.status == 0, "\(advertised)")
            try await Self.expectClean(bench, after: "bluejay advertise --duration 1")

            for (command, signal, condition) in [
                ("scan --hci hci0 --duration 600", "TERM", "scanning"),
                ("advertise --hci hci0 --name GuestAd --seconds 600", "INT", "advertising"),
            ] {
                let stopped = bench.start("""
                    bluejay \(command) > /tmp/running.log 2>&1 &
                    echo $! > /tmp/running.pid
                    wait $!
                    status=$?
                    cat /tmp/running.log >&2
                    exit $status
                    """)
                try await waitUntil("controller A \(condition)", timeout: .seconds(120)) {
                    (try? await rig.request("host_controller"))?.bool(condition) == true
                }
                let signalled = try await guest.run("kill -\(signal) $(cat /tmp/running.pid)")
                #expect(signalled.status == 0, "\(signalled)")
                let ended = try await stopped.result
                #expect(ended.status == 0, "bluejay \(command) should exit 0 on SIG\(signal): \(ended)")
                try await Self.expectClean(bench, after: "bluejay \(command) and SIG\(signal)")
            }
        }

        /// controller A neither scans, advertises, initiates nor has a link, and hci0 is down.
        static func expectClean(_ bench: GuestBench, after what: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let state = try await bench.rig.request("host_controller")
            #expect(state.bool("scanning") == false && state.bool("advertising") == false && state.bool("initiating") == false
                && state["connections"]?.arrayValue?.isEmpty == true,
                "after \(what), controller A: \(state)", sourceLocation: sourceLocation)
            let adapter = try await bench.guest.run("hciconfig hci0")
            #expect(adapter.stdout.contains("DOWN"), "after \(what): \(adapter)", sourceLocation: sourceLocation)
        }
    }
}
