"""What every layer of the runtime shares, and nothing that does I/O.

The exception tree (``errors``) and message text (``text``), optional libraries named by
their extra (``extras``), argument checks (``checks``), request and reply JSON
(``jsonbody``), and the values generated code is built from: ``codec`` (``EnvModel``,
``ModelCodec``), ``result`` (``StepResult``) and ``spec`` (``EnvSpec``). Imports nothing of
the layers above.
"""
