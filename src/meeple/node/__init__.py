"""The cluster's node roles over NATS (docs/cluster.md): ``edge`` (:mod:`.edge`),
``rooms`` (:mod:`.rooms`), ``lobby`` (:mod:`.lobby`), ``store`` (:mod:`.store`), what
crosses between them (:mod:`.wire`) and the node that runs any mix (:mod:`.node`)."""
