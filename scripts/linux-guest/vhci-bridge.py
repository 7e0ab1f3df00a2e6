#!/usr/bin/env python3
# The Linux guest's bridge between a controller on the host and the kernel (see
# docs/LINUX-GUEST.md): the virtio-serial port given as the argument carries H4 to and from
# the controller (QEMU connects it to a host TCP port), and /dev/vhci makes the kernel see
# that controller as hci0.
#
# /dev/vhci (drivers/bluetooth/hci_vhci.c): writing `ff 00` (a vendor packet, HCI_PRIMARY)
# creates the controller and is answered with `ff 00` and the index (2 octets, little-endian).
# Then every write must be exactly one H4 packet, so the port's byte stream is cut on the H4
# headers here; a read returns one packet. Writes while hci0 is down fail with ENXIO (the
# kernel takes nothing from a closed device): those packets are dropped.
import errno
import os
import sys
import threading

# H4 packet indicator -> (header length, offset of the length field, its size in octets).
HEADERS = {
    0x01: (3, 2, 1),  # command
    0x02: (4, 2, 2),  # ACL data
    0x03: (3, 2, 1),  # SCO data
    0x04: (2, 1, 1),  # event
    0x05: (4, 2, 2),  # ISO data (the length's top 2 bits are flags)
}


def log(message: str) -> None:
    print(f'vhci-bridge: {message}', file=sys.stderr, flush=True)


def write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


def packets(stream):
    '''Cuts the H4 byte stream into whole packets (indicator included).'''
    buffer = bytearray()
    for chunk in stream:
        buffer += chunk
        while buffer:
            header = HEADERS.get(buffer[0])
            if header is None:
                raise ValueError(f'unknown H4 indicator 0x{buffer[0]:02x}')
            size, offset, width = header
            if len(buffer) < 1 + size:
                break
            length = int.from_bytes(buffer[1 + offset:1 + offset + width], 'little')
            if buffer[0] == 0x05:
                length &= 0x3FFF
            end = 1 + size + length
            if len(buffer) < end:
                break
            yield bytes(buffer[:end])
            del buffer[:end]


def reads(descriptor: int):
    while True:
        chunk = os.read(descriptor, 65536)
        if not chunk:
            return
        yield chunk


def controller_to_kernel(port: int, vhci: int) -> None:
    dropped = 0
    for packet in packets(reads(port)):
        try:
            os.write(vhci, packet)
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
            dropped += 1
            if dropped in (1, 10, 100) or dropped % 1000 == 0:
                log(f'hci0 is down: {dropped} packet(s) from the controller dropped so far')
    log('the controller closed the port')


def kernel_to_controller(vhci: int, port: int) -> None:
    while True:
        packet = os.read(vhci, 65536)
        if not packet:
            log('/dev/vhci closed')
            return
        write_all(port, packet)


def main() -> int:
    port = os.open(sys.argv[1], os.O_RDWR | os.O_CLOEXEC)
    vhci = os.open('/dev/vhci', os.O_RDWR | os.O_CLOEXEC)
    # Within a second of opening, or the driver creates a default controller by itself.
    os.write(vhci, bytes([0xFF, 0x00]))
    answer = os.read(vhci, 4)
    if len(answer) != 4 or answer[:2] != bytes([0xFF, 0x00]):
        log(f'unexpected answer from /dev/vhci: {answer.hex()}')
        return 1
    log(f'hci{int.from_bytes(answer[2:4], "little")} created')
    threads = [
        threading.Thread(target=controller_to_kernel, args=(port, vhci), daemon=True),
        threading.Thread(target=kernel_to_controller, args=(vhci, port), daemon=True),
    ]
    for thread in threads:
        thread.start()
    # Either direction ending ends the bridge (and, with /dev/vhci closed, hci0).
    while all(thread.is_alive() for thread in threads):
        threads[0].join(0.5)
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Exception as error:  # logged for the console's reader, then the bridge ends
        log(f'failed: {error!r}')
        sys.exit(1)
