"""Speech in: the recogniser beside the translator (no Gradio, no FastAPI here).

- :mod:`.audio`: any sound file (WAV at any rate and channel count, OGG, WebM, MP3...) or raw
  16-bit PCM, as 16 kHz mono float32; nothing written to disk.
- :mod:`.recognizer`: the backend interface and the gate against invented sentences;
  :mod:`.whisper` (faster-whisper, in this process) and :mod:`.remote` (an OpenAI-compatible
  transcription server) implement it.
- :mod:`.vad` and :mod:`.listener`: voice activity cuts a stream into utterances, with drafts
  while one is spoken (the streaming API); :mod:`.transcript`: a whole file through the same path.
- :mod:`.service`: the recogniser loaded and warmed at start, in honest states.
"""

from hunyuan_webui.speech.listener import Draft, Final, Listener, Pacing
from hunyuan_webui.speech.recognizer import Piece, Recognition, Recognizer
from hunyuan_webui.speech.service import Speech, SpeechState, SpeechStatus
from hunyuan_webui.speech.transcript import Transcript, transcribe

__all__ = ["Draft", "Final", "Listener", "Pacing", "Piece", "Recognition", "Recognizer", "Speech",
           "SpeechState", "SpeechStatus", "Transcript", "transcribe"]
