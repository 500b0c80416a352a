// The trained routers registered for a dropped corpus (retrieval/mog_router_register), so a
// corpus ingested again under the same name starts without a router trained on the old data.
// Their artifact folders under data_dir/routers/ stay on disk.
MATCH (r:Router {corpus: $corpus})
DETACH DELETE r
RETURN count(*) AS routers
