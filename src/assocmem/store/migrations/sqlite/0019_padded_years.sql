-- Stored times before the year 1000 were written with an unpadded year
-- ('999-01-01T00:00:00.000000Z'): such a time sorts after every later one and no
-- reader parses it. Each is rewritten to the padded form ('0999-01-01T…'), the same
-- instant, in every column holding a stored time. A padded time's first '-' is its
-- fifth character, an unpadded one's the second to fourth.
UPDATE memories SET observed_at = substr('000' || observed_at, -27)
    WHERE instr(observed_at, '-') BETWEEN 2 AND 4;
UPDATE memories SET verified_at = substr('000' || verified_at, -27)
    WHERE instr(verified_at, '-') BETWEEN 2 AND 4;
UPDATE memories SET recheck_by = substr('000' || recheck_by, -27)
    WHERE instr(recheck_by, '-') BETWEEN 2 AND 4;
UPDATE memories SET created_at = substr('000' || created_at, -27)
    WHERE instr(created_at, '-') BETWEEN 2 AND 4;
UPDATE memories SET accessed_at = substr('000' || accessed_at, -27)
    WHERE instr(accessed_at, '-') BETWEEN 2 AND 4;

-- The two append-only logs refuse every update, so their guards step aside for this
-- one, as in 0009_tenancy.
DROP TRIGGER feedback_append_only;
UPDATE feedback SET created_at = substr('000' || created_at, -27)
    WHERE instr(created_at, '-') BETWEEN 2 AND 4;
CREATE TRIGGER feedback_append_only BEFORE UPDATE ON feedback
BEGIN
    SELECT RAISE(ABORT, 'the feedback log is append-only');
END;
DROP TRIGGER trust_credits_append_only;
UPDATE trust_credits SET created_at = substr('000' || created_at, -27)
    WHERE instr(created_at, '-') BETWEEN 2 AND 4;
CREATE TRIGGER trust_credits_append_only BEFORE UPDATE ON trust_credits
BEGIN
    SELECT RAISE(ABORT, 'the credit log is append-only');
END;

UPDATE entities SET created_at = substr('000' || created_at, -27)
    WHERE instr(created_at, '-') BETWEEN 2 AND 4;
UPDATE entity_mentions SET created_at = substr('000' || created_at, -27)
    WHERE instr(created_at, '-') BETWEEN 2 AND 4;
UPDATE relations SET declared_at = substr('000' || declared_at, -27)
    WHERE instr(declared_at, '-') BETWEEN 2 AND 4;
UPDATE consolidation_hubs SET flagged_at = substr('000' || flagged_at, -27)
    WHERE instr(flagged_at, '-') BETWEEN 2 AND 4;
UPDATE near_duplicates SET linked_at = substr('000' || linked_at, -27)
    WHERE instr(linked_at, '-') BETWEEN 2 AND 4;
UPDATE state_toggles SET superseded_at = substr('000' || superseded_at, -27)
    WHERE instr(superseded_at, '-') BETWEEN 2 AND 4;
UPDATE state_toggles SET reverted_at = substr('000' || reverted_at, -27)
    WHERE instr(reverted_at, '-') BETWEEN 2 AND 4;
UPDATE graduations SET graduated_at = substr('000' || graduated_at, -27)
    WHERE instr(graduated_at, '-') BETWEEN 2 AND 4;
UPDATE graduations SET reverted_at = substr('000' || reverted_at, -27)
    WHERE instr(reverted_at, '-') BETWEEN 2 AND 4;
UPDATE procedures SET created_at = substr('000' || created_at, -27)
    WHERE instr(created_at, '-') BETWEEN 2 AND 4;
UPDATE trust_cases SET raised_at = substr('000' || raised_at, -27)
    WHERE instr(raised_at, '-') BETWEEN 2 AND 4;
UPDATE trust_monitor SET updated_at = substr('000' || updated_at, -27)
    WHERE instr(updated_at, '-') BETWEEN 2 AND 4;
UPDATE trust_ratifications SET created_at = substr('000' || created_at, -27)
    WHERE instr(created_at, '-') BETWEEN 2 AND 4;
UPDATE trust_receipts SET created_at = substr('000' || created_at, -27)
    WHERE instr(created_at, '-') BETWEEN 2 AND 4;
UPDATE trust_slashes SET slashed_at = substr('000' || slashed_at, -27)
    WHERE instr(slashed_at, '-') BETWEEN 2 AND 4;
