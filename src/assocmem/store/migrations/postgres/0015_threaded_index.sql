-- Most memories belong to no thread (see the SQLite migration of the same name).
DROP INDEX memories_by_thread;
CREATE INDEX memories_by_thread ON memories (scope_id, thread, seq) WHERE thread IS NOT NULL;
