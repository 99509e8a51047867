-- Most memories belong to no thread, and every thread lookup compares `thread = ?`
-- (which no NULL satisfies): the thread index keeps only memories that have one,
-- instead of an entry per memory.
DROP INDEX memories_by_thread;
CREATE INDEX memories_by_thread ON memories (scope_id, thread, seq) WHERE thread IS NOT NULL;
