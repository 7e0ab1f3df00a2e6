// BluetoothVirtual: simulated LE controllers that speak standard HCI.
//
// Layout
//   VirtualLink            the shared radio medium: controllers, clock, the serial queue (public)
//   VirtualController      one simulated device: transport, position, state, faults (public)
//   VirtualControllerTransport   the host's HCITransport to a controller (public)
//   VirtualControllerServer      a controller served over HCI/TCP with H4 framing (public)
//   RadioModel, VirtualPosition  path loss and RSSI (public)
//   FaultInjection         ACLFault, ACLDirection, ConnectionAcceptance and the fault methods (public)
//   LinkSimulation(+…)     the world as a value: commands, advertising, scanning, connecting,
//                          connection events, encryption, ACL; no I/O, no clock
//   ControllerState, LinkConnection, LinkDataQueue, ACLBufferPool, DuplicateFilter,
//   TimerQueue, LinkClock, RadioTiming, ParameterRanges, ControllerCapabilities, ResolvingList
//                          plain values and rules, tested directly
//
// What is simulated (at real time × VirtualLink.timeScale)
// - Legacy advertising: an event every advertising interval (the minimum) plus advDelay
//   0-10 ms; scanners hear it during their scan window, if in range. Active scanning gets the
//   SCAN_RSP with the scan response data. Legacy or extended reports, as the host's scan
//   commands were; Filter_Duplicates per advertiser and PDU kind. Directed advertising
//   reaches its target only; high duty cycle directed stops after 1.28 s (Advertising Timeout).
// - Initiating: connects at the target's next connectable advertising event heard in the
//   scan window; both hosts get LE (Enhanced) Connection Complete (the newest unmasked) and
//   LE Channel Selection Algorithm; legacy advertising stops. Interval = Connection_Interval_Min.
// - Connections: connection events every interval; in each, up to packetsPerConnectionEvent
//   LL PDUs of the data length each way; buffers return (Number Of Completed Packets) only
//   once a packet went over the air; the receiver's host gets one ACL packet per LL PDU.
//   Procedures (connection update at an instant 6 events ahead, parameters request through
//   the central's host, feature and version exchange, data length update, PHY update)
//   complete in later events. Out of range: supervision timeout (0x08), or 0x3E when no
//   event ever got through.
// - Encryption (LinkSimulation+Encryption): the central's LE Enable Encryption reaches the
//   peripheral's host as LE Long Term Key Request in the next event (one more for a restart,
//   which pauses first); its Reply starts encryption two events later: equal keys give
//   Encryption Change (or Encryption Key Refresh Complete on a restart) on both sides,
//   different keys a disconnection with MIC Failure (0x3D); its Negative Reply gives the
//   central Encryption Change with PIN or Key Missing (0x06). The link keeps its key.
//
// Deliberate simplifications
// - Nothing is enciphered: the keys are compared, there is no session key, MIC or
//   Encryption Change [v2] (no Set Event Mask Page 2), and data keeps flowing during the
//   encryption start (a real link layer pauses it).
// - No extended advertising, no periodic advertising, no ISO, no Filter Accept List (the
//   filtering policies therefore accept nothing), no LE Coded PHY. The resolving list
//   (ResolvingList) resolves peers' private addresses once the host enables address
//   resolution on a controller configured with LL Privacy (reports and connections with
//   types 0x02/0x03, LE Create Connection to an identity, network and device privacy modes);
//   no address is generated: RPA own-address types fall back to the identity address.
// - Mixing legacy and extended commands is not refused (Core 6.0, Vol 4, Part E, 3.1.1 says
//   it should be): a host may scan with the extended commands and advertise with the legacy
//   ones, as hosts do on controllers without extended advertising.
// - Peripheral latency is reported but the peripheral listens at every event; the PHY
//   changes nothing in timing; no channel map, collisions or interference.
