"""ERP-42 V3.0 serial protocol (docs/erp42.md), no ROS imports:

``frames``   the frame codec (:class:`Command` / :class:`Feedback`, ``encode_*`` / ``decode_*``) and the
             stream framer (:class:`Framer`, :class:`CommandFramer`, :class:`FeedbackFramer`)
``convert``  the conversions with the bridge's parameters (:class:`Erp42Params`): CtrlCmd -> command
             frames, feedback frames -> SI values, encoder counts

The names below are the frame codec's public API: ``from morai_bridge.wire import erp42`` and
``erp42.Framer`` etc.; the conversions are imported from :mod:`.convert`.
"""
from .frames import (COMMAND_LEN, COMMAND_STRUCT, ETX, FEEDBACK_LEN, FEEDBACK_STRUCT, GEAR_BACKWARD, GEAR_FORWARD,
                     GEAR_NEUTRAL, LONGL_CMD_VELOCITY, SPEED_MAX_RAW, STEER_MAX_RAW, STEER_RAW_PER_DEG, STX, Command,
                     CommandFramer, CommandRejected, Erp42Error, Feedback, FeedbackFramer, Framer, decode_command,
                     decode_feedback, encode_command, encode_feedback)
from .frames import __all__
