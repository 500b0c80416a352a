"""SIGTERM inside a long command raises Terminated (a KeyboardInterrupt) in the main thread, and
the previous handler is back afterwards."""

from __future__ import annotations

import codecs
import os
import signal
import threading
import time

import pytest

from kg_platform.cli.signals import EXIT_TERMINATED, Terminated, sigterm_as_interrupt


def test_sigterm_becomes_terminated_and_the_old_handler_returns() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with pytest.raises(Terminated, match="stopped by SIGTERM"):
            with sigterm_as_interrupt():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # interrupted by the handler well before this ends
        assert issubclass(Terminated, KeyboardInterrupt) and EXIT_TERMINATED == 143
        os.kill(os.getpid(), signal.SIGTERM)  # outside the block: the earlier handler again
        time.sleep(0.1)
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_outside_the_main_thread_nothing_is_installed() -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with sigterm_as_interrupt():
                pass
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            errors.append(exc)

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors == [] and signal.getsignal(signal.SIGTERM) is before


def test_sigterm_inside_a_codec_keeps_its_message() -> None:
    """CI once saw "decoding with 'cp437' codec failed (Terminated: ...)" when SIGTERM landed while
    zipfile decoded a DOCX member name: CPython re-creates plain exceptions raised in codecs."""

    def decode_then_stop(data: bytes, errors: str = "strict") -> tuple[str, int]:
        raise Terminated("SIGTERM")

    def find(name: str) -> codecs.CodecInfo | None:
        if name == "kgp_test_stop":
            return codecs.CodecInfo(name=name, encode=decode_then_stop, decode=decode_then_stop)
        return None

    codecs.register(find)
    try:
        with pytest.raises(Terminated) as raised:
            b"member.xml".decode("kgp_test_stop")
        assert str(raised.value) == "stopped by SIGTERM"
        assert raised.value.signal_name == "SIGTERM"
    finally:
        codecs.unregister(find)
