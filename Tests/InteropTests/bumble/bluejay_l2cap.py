# LE credit-based L2CAP channels for the interop tests (Tests/InteropTests/L2CAPChannelInteropTests.swift).
# Loaded with `--plugin bluejay_l2cap` by peer.py (peripheral role) or central.py (central role).
#
# Bumble's own channels (bumble/l2cap.py, LeCreditBasedChannel) serve or open the channel; this
# plugin only wires them to commands. Bumble gives credits back as K-frames arrive (not as an
# application reads), and its write() is a byte stream re-cut into SDUs of the peer's MTU: the
# tests compare byte streams, not SDU boundaries.
#
# Commands:
#   l2cap_server  psm, mtu (2048), mps (2048), max_credits (256), mode ("echo" | "sink")
#                 registers a server; each channel it accepts echoes (or only records) what arrives
#   l2cap_connect psm, mtu, mps, max_credits, mode, count (0)   opens a channel on the link (with
#                 `count`, that many enhanced channels in one request); the last is the newest
#   l2cap_send    size, seed (0)   writes `size` bytes of the pattern (or `text`, UTF-8) on the newest channel; ack
#                 once drained (handed to the controller under the peer's credits)
#   l2cap_stats   ack: received (bytes), sdus, matches (the bytes equal the pattern of `seed`
#                 and their length; only with `seed` given), first_mismatch, peer_mtu, peer_mps, credits (Bumble's,
#                 to send), closed
#   l2cap_close   disconnects the newest channel
# Events:
#   {"event":"l2cap_open","psm":N,"peer_mtu":N,"peer_mps":N,"cid":N}
#   {"event":"l2cap_closed"}

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from bumble import l2cap

import peer

logger = logging.getLogger('l2cap')
emit = getattr(sys.modules['__main__'], 'emit', peer.emit)
CommandError = getattr(sys.modules['__main__'], 'CommandError', getattr(peer, 'CommandError', RuntimeError))


def pattern(size: int, seed: int) -> bytes:
    """Byte i is (i * 31 + seed) mod 256, as in the Swift tests."""
    return bytes(((i * 31 + seed) & 0xFF) for i in range(size))


class Session:
    def __init__(self) -> None:
        self.channel: l2cap.LeCreditBasedChannel | None = None
        self.received = bytearray()
        self.sdus = 0
        self.closed = False

    def attach(self, channel: l2cap.LeCreditBasedChannel, mode: str, rig) -> None:
        self.channel = channel
        self.received = bytearray()
        self.sdus = 0
        self.closed = False

        def on_sdu(sdu: bytes) -> None:
            self.received += sdu
            self.sdus += 1
            if mode == 'echo':
                channel.write(sdu)

        def on_close() -> None:
            self.closed = True
            emit('l2cap_closed')

        channel.sink = on_sdu
        channel.on('close', on_close)
        emit('l2cap_open', psm=channel.psm, peer_mtu=channel.peer_mtu, peer_mps=channel.peer_mps, cid=channel.source_cid)


def spec(command: dict[str, Any]) -> l2cap.LeCreditBasedChannelSpec:
    return l2cap.LeCreditBasedChannelSpec(
        psm=int(command['psm']), mtu=int(command.get('mtu', 2048)), mps=int(command.get('mps', 2048)),
        max_credits=int(command.get('max_credits', 256)))


def install(role, rig) -> None:
    session = Session()
    devices = [p.device for p in getattr(role, 'peripherals', [])]
    if hasattr(role, 'device'):
        devices.append(role.device)

    def connection_of(command: dict[str, Any]):
        if hasattr(role, 'only_connection'):
            return role.only_connection(command)
        if role.connection is None:
            raise CommandError('not connected')
        return role.connection

    async def cmd_server(command: dict[str, Any]):
        mode = command.get('mode', 'echo')
        for device in devices:
            device.create_l2cap_server(spec=spec(command), handler=lambda channel: session.attach(channel, mode, rig))
        return {}

    async def cmd_connect(command: dict[str, Any]):
        connection = connection_of(command)
        count = int(command.get('count', 0))
        try:
            if count:
                # L2CAP_CREDIT_BASED_CONNECTION_REQ: `count` enhanced channels at once.
                channels = await connection.device.l2cap_channel_manager.create_enhanced_credit_based_channels(
                    connection, spec(command), count)
            else:
                channels = [await connection.create_l2cap_channel(spec=spec(command))]
        except Exception as error:
            return {'opened': False, 'error': f'{type(error).__name__}: {error}'}
        for channel in channels:
            session.attach(channel, command.get('mode', 'echo'), rig)
        channel = channels[-1]
        return {'opened': True, 'count': len(channels), 'peer_mtu': channel.peer_mtu, 'peer_mps': channel.peer_mps}

    async def cmd_send(command: dict[str, Any]):
        if session.channel is None:
            raise CommandError('no channel')
        if 'text' in command:
            session.channel.write(str(command['text']).encode())
        else:
            session.channel.write(pattern(int(command['size']), int(command.get('seed', 0))))
        await session.channel.drain()
        return {}

    async def cmd_stats(command: dict[str, Any]):
        result: dict[str, Any] = {'received': len(session.received), 'sdus': session.sdus, 'closed': session.closed}
        if session.channel is not None:
            result.update(peer_mtu=session.channel.peer_mtu, peer_mps=session.channel.peer_mps, credits=session.channel.credits)
        if 'seed' in command:
            expected = pattern(int(command.get('size', len(session.received))), int(command['seed']))
            result['matches'] = bytes(session.received) == expected
            mismatch = next((i for i, (a, b) in enumerate(zip(session.received, expected)) if a != b), -1)
            result['first_mismatch'] = mismatch
        return result

    async def cmd_close(_command: dict[str, Any]):
        if session.channel is not None and not session.closed:
            await session.channel.disconnect()
        return {}

    role.handlers.update({'l2cap_server': cmd_server, 'l2cap_connect': cmd_connect, 'l2cap_send': cmd_send,
                          'l2cap_stats': cmd_stats, 'l2cap_close': cmd_close})
