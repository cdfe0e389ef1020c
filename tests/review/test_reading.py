"""What the Review panel reads on a sample switch (after batch verdicts a store holds
thousands of rows): one sample's current verdicts, equal to what the whole-store reading gives,
and a stamp that changes with every row added."""

from masklens.core.review.store import Role, open_store

B = "toy:t"


def test_one_samples_verdicts_are_what_the_whole_store_says(tmp_path):
    with open_store(tmp_path / "r.sqlite", Role.WRITE, reviewer="ann") as st:
        stamps = [st.stamp()]
        st.record(B, "s1", "model_wrong")
        st.record(B, "s1", "gt_wrong", prompt_id="p2", reviewer="bob")
        wrong = st.record(B, "s2", "fine", note="n")
        st.record("other:b", "s1", "fine")  # another benchmark's s1
        stamps.append(st.stamp())
        st.retract(wrong)
        stamps.append(st.stamp())
        rows = st.record_many(B, ["s1", "s3"], "edit_invalid", reviewer="cy")
        stamps.append(st.stamp())
        st.retract_many(rows[1:])
        stamps.append(st.stamp())
        whole = st.sample_verdicts(B)
        for sid in ("s1", "s2", "s3", "s4"):
            assert st.sample_current(B, sid) == whole.get(sid, []), sid
        assert [v.verdict for v in st.sample_current(B, "s1")] == ["model_wrong", "gt_wrong", "edit_invalid"]
        assert len(set(stamps)) == len(stamps)  # every write moved it
        assert st.stamp() == stamps[-1]  # reading does not
