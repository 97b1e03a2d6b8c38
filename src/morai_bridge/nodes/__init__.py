"""One small ``main()`` per node."""
