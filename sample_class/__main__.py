"""``python -m sample_class [--class demo|core|full] [--students …]``: the demo on the sample
class (:mod:`sample_class.demo`; ``make demo`` and ``make demo-full`` run it)."""

from sample_class.demo import main

raise SystemExit(main())
