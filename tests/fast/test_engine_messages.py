"""The messages between the engine process and its parent, as the pipe carries them (pickled):
a scheduler pass's text and endings, an error that crosses as the same class with its
attributes, and a request's options unchanged."""

from __future__ import annotations

import pickle

from hunyuan_webui import errors
from hunyuan_webui.core.decoding import DecodingOptions
from hunyuan_webui.engine.base import Stream
from hunyuan_webui.engine.messages import Delta, Step, Submit
from hunyuan_webui.engine.worker import _Forwarder, error_payload, rebuild_error


class _Pipe:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, message: object) -> None:
        self.sent.append(pickle.dumps(message))

    def received(self) -> list[object]:
        return [pickle.loads(raw) for raw in self.sent]


def test_a_pass_sends_each_streams_new_text_and_its_end_with_the_error_it_had():
    pipe = _Pipe()
    forward = _Forwarder(pipe)
    going, ended = Stream("a", DecodingOptions()), Stream("b", DecodingOptions())
    forward.add([7, 8], [going, ended])
    going.push("Bon")
    going.usage.completion_tokens = 1
    forward.flush()
    going.push("jour")
    going.usage.completion_tokens = 2
    ended.finish("error", errors.BusyError("Too many at once.", retry_after=4.5))
    forward.flush()
    forward.flush()  # nothing new: nothing sent
    first, second = pipe.received()
    assert first == Step([Delta(7, "Bon", 1)], [])
    assert second.deltas == [Delta(7, "jour", 2)]
    [end] = second.ends
    assert (end.key, end.reason, end.completion_tokens, end.first_token) == (8, "error", 0, False)
    error = rebuild_error(end.error)
    assert type(error) is errors.BusyError
    assert (error.user_message, error.retry_after) == ("Too many at once.", 4.5)


def test_an_error_of_no_known_class_crosses_as_a_generation_failure():
    error = rebuild_error(pickle.loads(pickle.dumps(error_payload(RuntimeError("CUDA OOM")))))
    assert type(error) is errors.TranslatorError
    assert error.user_message == "Generation failed: CUDA OOM"


def test_a_submit_carries_each_prompts_options_unchanged():
    options = [DecodingOptions(deterministic=True, max_new_tokens=64, draft="Bonjour"),
               DecodingOptions(temperature=0.2, seed=11)]
    message = pickle.loads(pickle.dumps(Submit(3, [1, 2], ["p", "q"], options)))
    assert message == Submit(3, [1, 2], ["p", "q"], options)
