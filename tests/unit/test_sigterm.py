"""deployments.runtime.processes: SIGTERM read as Ctrl-C for a command's length, and held
over a step a kill must not cut in half (initdb); both leave the handler as they found
it. Signals are sent to this process (pytest runs tests in the main thread)."""

import os
import signal
import threading

import pytest

from deployments.runtime.processes import sigterm_as_interrupt, sigterm_deferred, sigterm_kept

pytestmark = pytest.mark.unit


def test_sigterm_raises_keyboard_interrupt_inside_the_block_only():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("not interrupted")
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_deferred_sigterm_arrives_when_the_step_is_done():
    done = []
    with pytest.raises(KeyboardInterrupt), sigterm_as_interrupt():
        with sigterm_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("the step ran to its end")
        raise AssertionError("the held signal was lost")
    assert done == ["the step ran to its end"]


def test_a_handler_replaced_inside_the_block_comes_back():
    # ray.init installs its own SIGTERM handler (one that aborts the process)
    with sigterm_as_interrupt():
        with sigterm_kept():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)


def test_outside_the_main_thread_nothing_changes():
    seen = []

    def run():
        with sigterm_as_interrupt(), sigterm_deferred(), sigterm_kept():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [before]


def test_sigint_interrupts_in_the_block_even_where_the_process_ignored_it():
    # A script's `biomed-search serve &` starts with SIGINT ignored: Ctrl-C did nothing
    # while the service started, then stopped it once serving (the event loop's handler).
    from deployments.runtime.processes import sigint_as_interrupt

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(KeyboardInterrupt), sigint_as_interrupt():
            # Python's own handler: asyncio.run takes SIGINT over only from it
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            os.kill(os.getpid(), signal.SIGINT)
            raise AssertionError("not interrupted")
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # as it was found
    finally:
        signal.signal(signal.SIGINT, previous)
