"""Association across layers: a reader follows a link by its weight summed over the
layers it sees, on both backends alike (each backend walks links its own way)."""

from __future__ import annotations

from assocmem import Memory
from tests.conftest import Target


def _associated(mem: Memory, concept: str, hops: int = 1) -> list[str]:
    found = mem.read(concepts=[concept], k=10, hops=hops, threshold=2.0)
    return [item.id for item in found.items if item.source == "hebbian_retrieval"]


def test_a_link_counts_in_every_layer_the_reader_sees(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as plain, Memory(target, agent_id="a", role="ops") as ops:
        # "alpha" meets "beta" once in the plain class and once in the ops class:
        # weight 1 in each layer, 2 to a reader of both.
        plain.write("alpha beta, plainly", concepts=["alpha", "beta"])
        ops.write("alpha beta, for ops", concepts=["alpha", "beta"], access=["ops"])
        target_id = plain.write("beta gamma", concepts=["beta", "gamma"]).id
        assert _associated(plain, "alpha") == []
        assert _associated(ops, "alpha") == [target_id]


def test_two_hops_reach_through_the_strongest_links(store_target: Target) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as mem:
        for n in range(3):
            mem.write(f"alpha beta {n}", concepts=["alpha", "beta"])
            mem.write(f"beta delta {n}", concepts=["beta", "delta"])
        mem.write("alpha omega", concepts=["alpha", "omega"])  # once: below the threshold
        far = mem.write("delta zeta", concepts=["delta", "zeta"]).id
        weak = mem.write("omega theta", concepts=["omega", "theta"]).id
        one, two = _associated(mem, "alpha"), _associated(mem, "alpha", hops=2)
        assert far not in one and far in two
        assert weak not in two


def test_the_associative_arm_leaves_out_only_what_the_concept_arm_ranks(
    store_target: Target,
) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as mem:
        # Two old notes tie "alpha" to "gamma"; forty newer ones carry "alpha" alone,
        # so the concept arm's newest 32 carriers of "alpha" are all newer.
        old = [mem.write(f"alpha gamma {n}", concepts=["alpha", "gamma"]).id for n in range(2)]
        for n in range(40):
            mem.write(f"alpha filler {n}", concepts=["alpha", f"filler{n}"])
        found = mem.read(concepts=["alpha"], k=50, threshold=2.0)
        by_id = {item.id: item for item in found.items}
        # Older than every memory the concept arm ranks, they are reached through
        # "gamma" rather than lost to both arms.
        assert all(by_id[i].source == "hebbian_retrieval" for i in old)
        for item in found.items:
            assert not {"concept_scoped", "hebbian_retrieval"} <= set(item.sources)


def test_a_linked_concept_whose_newest_carriers_the_concept_arm_ranked_brings_older_ones(
    store_target: Target,
) -> None:
    target = store_target()
    with Memory(target, agent_id="a") as mem:
        # "alpha" alone in 40 old notes, then with "beta" in 40 newer ones: the concept
        # arm ranks beta's newest 32, which are alpha's newest 32 too. Reached through
        # the alpha link, the arm keeps alpha's next newest: 8 more with beta, then
        # 24 of the alpha-only notes, far deeper than alpha's first few carriers.
        alone = {mem.write(f"alpha note {n}", concepts=["alpha"]).id for n in range(40)}
        for n in range(40):
            mem.write(f"alpha beta note {n}", concepts=["alpha", "beta"])
        found = mem.read(concepts=["beta"], k=80, threshold=2.0)
        linked = [item.id for item in found.items if item.source == "hebbian_retrieval"]
    assert len(linked) == 32
    assert len(alone.intersection(linked)) == 24
