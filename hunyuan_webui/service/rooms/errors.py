"""What a class refuses, each with a stable ``code`` that the class pages word in the reader's
language (the HTTP answer is ``{"error": {"code", "message"}}``; ``message`` is English).

=========================  ======  ==========================================================
code                       status  when
=========================  ======  ==========================================================
``room_not_found``         404     no class has this code (mistyped, expired)
``room_ended``             410     the teacher ended the class (joining, sending)
``room_locked``            403     the teacher locked the class to new students
``room_full``              429     every seat is taken by a student whose stream is open
``room_paused``            409     the teacher paused sending
``student_removed``        403     the teacher removed this student (that id cannot rejoin)
``student_not_found``      404     the teacher named a student this class does not have
``too_many_wrong_codes``   429     this address tried too many wrong codes (a wait that grows)
``too_many_rooms``         429     this teacher (address or signed-in user) has too many open
``sign_in_required``       401     with ``--auth``: only a signed-in user opens a class
``store_unavailable``      503     the rooms' Redis cannot be reached; nothing was changed
=========================  ======  ==========================================================

The refusals of 429 and 503 carry ``Retry-After``.
"""

from __future__ import annotations

from hunyuan_webui.errors import AuthError, RateLimitError, TranslatorError


class RoomNotFoundError(TranslatorError):
    code = "room_not_found"
    http_status = 404


class RoomEndedError(TranslatorError):
    code = "room_ended"
    http_status = 410


class RoomLockedError(TranslatorError):
    code = "room_locked"
    http_status = 403


class RoomFullError(RateLimitError):
    code = "room_full"


class RoomPausedError(TranslatorError):
    code = "room_paused"
    http_status = 409


class StudentRemovedError(TranslatorError):
    code = "student_removed"
    http_status = 403


class StudentNotFoundError(TranslatorError):
    code = "student_not_found"
    http_status = 404


class WrongCodesError(RateLimitError):
    code = "too_many_wrong_codes"


class TooManyRoomsError(RateLimitError):
    code = "too_many_rooms"


class SignInRequiredError(AuthError):
    code = "sign_in_required"


class StoreUnavailableError(TranslatorError):
    """The rooms' Redis did not answer: the request changed nothing and may be sent again."""

    code = "store_unavailable"
    http_status = 503

    def __init__(self, message: str = "The class's store (Redis) cannot be reached just now; "
                 "nothing was sent. Try again in a few seconds.", retry_after: float = 5.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after
