"""Writes to the case library, one module per sub-domain. This package owns the case table.

- `cases`: making, editing and deleting cases;
- `categories`: the fault-category taxonomy;
- `proposals`: the error code and fault category proposed for new AUTO cases;
- `search`: a search of the library, recorded on the session that asked;
- `outcomes`: what the sessions that found a case made of it;
- `duplicates`: near-duplicates flagged, and merges;
- `imports`: case files and runbooks imported (`import_merges`: the merges a file claims);
- `index`: asking for, claiming and running the search indexer;
- `index_pass`: one pass of the indexer over the changed cases.

Every write records who made it (`created_by` / `updated_by`): `system` for cases made
from feedback, the operator's username for edits in the admin.
"""
