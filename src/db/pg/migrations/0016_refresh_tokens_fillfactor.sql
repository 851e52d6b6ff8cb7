-- Every refresh-token row is updated once (spent_at, at its rotation), soon after it is
-- written. On a full page that update cannot stay on the page (no HOT update): the row is
-- written again elsewhere with three new index entries, a page image each in the WAL. In a
-- large, long-lived table new rows go into the free space retention leaves, which fills
-- pages to the brim: at a million users 1.4% of the updates were HOT against 98% on an
-- empty database (bench/README.md, Scale). Keeping 15% of each page free for the update
-- keeps it HOT. Applies to pages written from now on; no rewrite, a brief lock.
ALTER TABLE "refresh_tokens" SET (fillfactor = 85);
