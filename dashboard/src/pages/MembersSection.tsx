import { PROJECT_ROLES, type GroupRoleResponse, type ProjectRole } from '@spectator/shared';
import { useState } from 'react';
import { FormError, InlineTextForm, ListTable } from '../components/forms';
import { Async, Empty } from '../components/states';
import { TimeAgo } from '../components/TimeAgo';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';

function RoleSelect({
  value,
  onChange,
  label,
}: {
  value: ProjectRole;
  onChange: (role: ProjectRole) => void;
  label: string;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value as ProjectRole)}>
        {PROJECT_ROLES.map((role) => (
          <option key={role} value={role}>
            {role}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * Who may do what (viewer < editor < approver < admin): roles given to people by hand, roles of
 * the provider's groups, and the four-eyes rule for approvals. A person holds the strongest role
 * any of these gives them.
 */
export function MembersSection() {
  const { api, project } = useApp();
  const access = useResource(() => Promise.all([api.members(project), api.project(project)]), [api, project]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<ProjectRole>('viewer');
  const [group, setGroup] = useState('');
  const [groupRole, setGroupRole] = useState<ProjectRole>('viewer');
  const { error, run } = useAction();

  const setMember = async () => {
    if ((await run(() => api.setMember(project, { email: email.trim(), role }))) === undefined) return;
    setEmail('');
    access.reload();
  };
  const saveGroups = async (groupRoles: GroupRoleResponse[]) => {
    if ((await run(() => api.setGroupRoles(project, groupRoles))) !== undefined) access.reload();
  };

  return (
    <section className="card" aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <Async resource={access} what="members">
        {([{ members, groupRoles }, { fourEyes }]) => {
          return (
            <>
              <label className="checkbox">
                <input
                  type="checkbox"
                  data-testid="four-eyes"
                  checked={fourEyes}
                  onChange={async (e) => {
                    const next = e.target.checked;
                    if ((await run(() => api.updateProject(project, { fourEyes: next }))) !== undefined)
                      access.reload();
                  }}
                />
                Four eyes: the author of a proposal cannot approve it
              </label>
              <h3>People</h3>
              {members.length === 0 ? (
                <Empty title="Nobody has a role given by hand" />
              ) : (
                <ListTable
                  testId="members"
                  columns={[
                    { label: 'Name' },
                    { label: 'Email' },
                    { label: 'Role' },
                    { label: 'Last signed in' },
                    { label: 'Actions', hidden: true },
                  ]}
                >
                  {members.map((member) => (
                    <tr key={member.person.id}>
                      <td title={`subject ${member.person.subject}`}>{member.person.name ?? '—'}</td>
                      <td>{member.person.email ?? '—'}</td>
                      <td>{member.role}</td>
                      <td>
                        <TimeAgo at={member.lastSignInAt} />
                      </td>
                      <td>
                        <button
                          type="button"
                          className="danger"
                          onClick={async () => {
                            if ((await run(() => api.removeMember(project, member.person.id))) !== undefined)
                              access.reload();
                          }}
                        >
                          Remove
                        </button>
                      </td>
                    </tr>
                  ))}
                </ListTable>
              )}
              <InlineTextForm
                label="Email"
                type="email"
                value={email}
                onChange={setEmail}
                placeholder="someone who signed in once"
                submitLabel="Give role"
                onSubmit={setMember}
              >
                <RoleSelect label="Role" value={role} onChange={setRole} />
              </InlineTextForm>
              <h3>Groups</h3>
              {groupRoles.length === 0 ? (
                <Empty title="No group gives a role">Map a group of your identity provider to a role.</Empty>
              ) : (
                <ListTable
                  testId="group-roles"
                  columns={[{ label: 'Group' }, { label: 'Role' }, { label: 'Actions', hidden: true }]}
                >
                  {groupRoles.map((entry) => (
                    <tr key={entry.group}>
                      <td>
                        <code>{entry.group}</code>
                      </td>
                      <td>{entry.role}</td>
                      <td>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => saveGroups(groupRoles.filter((other) => other.group !== entry.group))}
                        >
                          Remove
                        </button>
                      </td>
                    </tr>
                  ))}
                </ListTable>
              )}
              <InlineTextForm
                label="Group"
                value={group}
                onChange={setGroup}
                placeholder="e.g. api-team"
                submitLabel="Map group"
                onSubmit={async () => {
                  await saveGroups([
                    ...groupRoles.filter((other) => other.group !== group.trim()),
                    { group: group.trim(), role: groupRole },
                  ]);
                  setGroup('');
                }}
              >
                <RoleSelect label="Role" value={groupRole} onChange={setGroupRole} />
              </InlineTextForm>
            </>
          );
        }}
      </Async>
      <FormError error={error} />
    </section>
  );
}
