# The rig's Bumble devices on Google's Rootcanal instead of Bumble's LocalLink
# (`peer.py --controller rootcanal --hci-port P`, `central.py` the same).
#
# Rootcanal (PyPI `rootcanal`, started by the Swift side: Tests/InteropTests/Support/Rootcanal.swift)
# makes a new controller, with a public address of its own, for every TCP connection to its HCI
# port, all of them on one simulated LE radio. So each Bumble device of the rig opens its own
# connection (as Bumble's `tcp-client:127.0.0.1:P` transport, acknowledging at once), and Bluejay's host opens one more (`tcp:127.0.0.1:P`):
# there is no controller A and nothing of the rig's controller patches (RigController) applies.
# What Rootcanal does differently from Bumble's controller is in README.md ("Rootcanal").

from __future__ import annotations

import asyncio
import logging
import socket

from bumble.host import Host
from bumble.transport.common import StreamPacketSink, StreamPacketSource, Transport

logger = logging.getLogger('rootcanal')


class QuickAckPacketSource(StreamPacketSource):
    '''Bumble's TCP packet source, acknowledging every read at once (TCP_QUICKACK).

    Rootcanal 1.10.0 leaves Nagle's algorithm on and writes an HCI packet in more than one
    piece: the second piece waits for the first one's ACK, which Linux delays up to 40 ms. So
    every HCI event would take 40 to 90 ms. Linux clears TCP_QUICKACK as it goes, so it is set
    again after each read.'''

    def connection_made(self, transport) -> None:
        self.socket = transport.get_extra_info('socket')
        self.quick_ack()

    def data_received(self, data: bytes) -> None:
        self.quick_ack()
        super().data_received(data)

    def connection_lost(self, exc) -> None:
        logger.debug('connection to Rootcanal lost: %s', exc)
        self.on_transport_lost()

    def quick_ack(self) -> None:
        if self.socket is not None:
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)


async def open_rootcanal_transport(port: int) -> Transport:
    '''A connection to Rootcanal's HCI port: a new controller of Rootcanal's.'''
    tcp, source = await asyncio.get_running_loop().create_connection(QuickAckPacketSource, host='127.0.0.1', port=port)
    return Transport(source, StreamPacketSink(tcp))


class RootcanalRadio:
    '''Stands where the rig's LocalLink stands: hands each Bumble device a host, and connects
    each host to a controller of its own on Rootcanal when the rig starts.'''

    def __init__(self, hci_port: int):
        self.hci_port = hci_port
        self.hosts: list[tuple[str, Host]] = []
        self.transports: list = []

    def attach_device(self, name: str) -> tuple[None, Host]:
        '''A host for device `name`, connected by `connect()`. No controller object: Rootcanal's
        controllers live in its own process.'''
        host = Host()
        self.hosts.append((name, host))
        return None, host

    async def connect(self) -> None:
        '''Opens one HCI connection per device: Rootcanal makes a controller for each.'''
        for name, host in self.hosts:
            transport = await open_rootcanal_transport(self.hci_port)
            self.transports.append(transport)
            host.set_packet_source(transport.source)
            host.set_packet_sink(transport.sink)
            logger.info('device %s on Rootcanal (127.0.0.1:%d)', name, self.hci_port)

    async def close(self) -> None:
        '''Closes every connection: Rootcanal removes those controllers and ends their links.'''
        for transport in self.transports:
            try:
                await transport.close()
            except Exception:  # Rootcanal may be gone already
                logger.exception('cannot close a connection to Rootcanal')
        self.transports.clear()
