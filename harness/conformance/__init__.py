"""The conformance report a vendor publishes (`conformance-report.yaml`) and the commands that read it.

report.py           the report built from a run's results documents (pure; specs/schema/conformance-report)
catalog_hash.py     the digest of a profile's catalog and the cassettes a report names
publish.py          the report on disk: certify's options, `verify-report`, `report --implementations`
implementations.py  the table of a folder of conformance reports (implementations.md, .html)
"""
