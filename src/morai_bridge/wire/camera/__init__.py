"""MORAI SIM camera stream over UDP: JPEG chunk datagrams ("MOR") and boxes ("BOX").

One camera sensor sends both kinds on one UDP port:

* :mod:`.images`: the image chunks ("MOR": header forms, :class:`FrameAssembler`,
  :func:`encode_frame`), and what both kinds share: :data:`DEFAULT_PORT`,
  :data:`DATAGRAM_SIZE`, the header fields, the stamps and :func:`classify`;
* :mod:`.boxes`: the ground-truth 2D/3D bounding boxes ("BOX": :data:`BOX_FORMS`,
  :func:`decode_boxes`, :func:`encode_boxes`).

Each module documents its facts and their confidence tags.  The package offers
the public API of both (``camera.decode_boxes(...)``, ``camera.FrameAssembler``, ...).
No ROS imports.
"""

from .images import (DATAGRAM_SIZE, DEFAULT_PORT, DROP_REASONS, HEADER_FORMS, TAIL_LAST, TAIL_MORE,
                     ChunkForm, EncodeError, FrameAssembler, ImageChunk, ImageFrame, SensorDecodeError,
                     classify, decode_chunk, encode_frame)
from .boxes import (BOX_FORMS, BOX_SIZE_UNITS, BoxForm, BoxObject, BoxPacket, decode_boxes,
                    encode_boxes)

__all__ = [
    "DEFAULT_PORT", "DATAGRAM_SIZE", "TAIL_MORE", "TAIL_LAST", "HEADER_FORMS", "ChunkForm",
    "BOX_FORMS", "BoxForm", "ImageChunk", "ImageFrame", "BoxObject", "BoxPacket",
    "FrameAssembler", "classify", "decode_chunk", "encode_frame", "decode_boxes",
    "encode_boxes", "SensorDecodeError", "EncodeError", "DROP_REASONS", "BOX_SIZE_UNITS",
]
