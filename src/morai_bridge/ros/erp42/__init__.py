"""The ERP-42 node (nodes/erp42_serial.py): /ctrl_cmd into the serial link, PCU feedback out as topics.

``driver``  :class:`Erp42Core` (the messages and diagnostics, without a master) and :class:`Erp42Ros`
"""
