"""sounds.py — sounds that are not speech, which the voice tests play to the recognizer.

mains_hum() is 3.5 s of a quiet room at 16 kHz (a hiss of sigma 3), with a 50 Hz hum at
-44 dBFS over its second second: under the recognizer's lowest band, so it opens an
utterance the recognizer hears no words in. Returned as 16-bit little-endian PCM, the same
bytes on every call.
"""
import math
import random
import struct

RATE = 16000


def mains_hum():
    noise = random.Random(7)
    room = [noise.gauss(0, 3) + (200 * math.sin(2 * math.pi * 50 * i / RATE)
                                 if RATE // 2 <= i < 3 * RATE // 2 else 0)
            for i in range(7 * RATE // 2)]
    return struct.pack("<%dh" % len(room), *(int(round(x)) for x in room))
