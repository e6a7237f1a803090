"""Python 3.13 checks run in a Debian 13 chroot by ``scripts/py313.py`` (``make test-py313``)."""
