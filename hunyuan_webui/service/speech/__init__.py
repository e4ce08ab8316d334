"""A class spoken: the teacher's microphone in a room.

``session.py`` is one microphone stream (numbered frames in; drafts published and finished
utterances posted like typed sentences), ``rooms.py`` the streams of every class (one speaker
per class, reconnects resumed), ``drafts.py`` the drafts translated at the pace the machine
allows. The teacher's fix of a sentence the recogniser heard wrong is the rooms' own correction
(:mod:`hunyuan_webui.service.rooms.edits`). The recogniser itself is :mod:`hunyuan_webui.speech`; the rooms :mod:`hunyuan_webui.service.rooms`.
"""

from hunyuan_webui.service.speech.rooms import RoomSpeech, SpeakerBusyError
from hunyuan_webui.service.speech.session import Behind, Session

__all__ = ["Behind", "RoomSpeech", "Session", "SpeakerBusyError"]
