export default { mailer: async () => 'MAILED', other: async () => 'OTHER-RAN' };
